"""Helpers shared by every test layer."""
