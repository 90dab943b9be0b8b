"""One module per verb: a typed function with keyword-only arguments returning a result value."""
