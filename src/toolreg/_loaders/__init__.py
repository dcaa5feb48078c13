"""Loading packs into a registry: the plugin host, hooks, import deadlines, process isolation."""
