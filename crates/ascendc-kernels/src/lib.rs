//! AscendC kernels (work in progress).
