"""Where and how code runs: lazy imports of torch, the one seed helper, the device setting, the
lock this environment was installed from."""
