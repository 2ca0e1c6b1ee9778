"""Weekly posts: the weekly challenge, its closing summary and the weekly digest."""
