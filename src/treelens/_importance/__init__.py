"""_importance"""
