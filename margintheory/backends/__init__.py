"""Array-kernel backends behind one boundary."""
