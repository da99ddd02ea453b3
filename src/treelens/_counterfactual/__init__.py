"""_counterfactual"""
