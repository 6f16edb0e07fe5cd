"""Tournaments: many debates between models, judged blind, rated, and reported."""
