"""The command catalogue, its text grammar, dispatch and the help generated from it."""
