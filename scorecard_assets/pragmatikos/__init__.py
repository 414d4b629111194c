"""pragmatikos"""
