"""C++ artifacts: the CCCL-shaped tuning headers (``include/muh/tuning/*.cuh``)."""
