"""_explain"""
