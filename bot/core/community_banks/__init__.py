"""A community's own question banks: uploads, suggestions, review, the shelf."""
