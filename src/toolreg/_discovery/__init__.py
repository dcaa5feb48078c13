"""What there is to load: built-in modules, installed packs, local plugins; their caches."""
