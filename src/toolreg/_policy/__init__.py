"""The operator's say: the config file, pack admission, applying the config."""
