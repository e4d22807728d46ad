//! A functional emulator of the CANN runtime on the host CPU (work in progress).
