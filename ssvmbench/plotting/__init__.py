"""Figures and tables from run logs."""
