"""ILF: the symbolic expert, function features and the dataset for learning."""
