"""transform"""
