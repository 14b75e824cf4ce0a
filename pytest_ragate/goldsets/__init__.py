"""Goldset files and sealing. The file name that makes a folder a goldset is here, light, for
the plugin's check of every collected file."""

CONFIG_NAME = "ragate.toml"
