"""assets"""
