"""One module per problem family; :mod:`.registry` maps problem names to them."""
