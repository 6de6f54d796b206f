"""Tools around the firmware (not hardware): the HDL identity check of pure moves."""
