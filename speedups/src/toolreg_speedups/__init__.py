"""toolreg's dispatch hot path, compiled (see toolreg's docs/registry.md)."""
