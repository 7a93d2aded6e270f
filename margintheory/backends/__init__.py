"""Array-kernel backends (numpy reference and numba kernels, JAX on CPU or GPU) behind one boundary."""
