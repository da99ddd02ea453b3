"""_plots"""
