# The driver is part of the root it came with: nothing to try.
set(CMAKE_ASC_COMPILER_WORKS 1 CACHE INTERNAL "")
