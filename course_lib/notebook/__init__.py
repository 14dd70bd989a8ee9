"""What notebooks need at run time: setup, plots and explorers (viz), quizzes.

This floor may import the lesson modules below it, never checks or instructor tooling.
"""
