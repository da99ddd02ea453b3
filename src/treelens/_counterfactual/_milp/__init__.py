"""_counterfactual/_milp"""
