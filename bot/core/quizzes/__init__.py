"""Personal practice: quizzes, reviews, live rounds and a member's own space."""
