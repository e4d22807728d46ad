# find_package(ASC) in an emulator root (cargo xtask emu-root): CMake's ASC language in host
# mode. Single-source `.asc` programs compile with ascendc-host-cc (ascendc-build's driver):
# their kernels for the host against the AscendC host layer, their host code as C++, linked with
# the root's libacl_rt.so, so that their `<<<...>>>` launches run on the emulator's streams.
# Installed as <root>/lib64/cmake/asc-config.cmake; found through CMAKE_PREFIX_PATH (set_env.sh
# adds <root>/lib64/cmake) or -DASC_DIR=<root>/lib64/cmake.
if(_ASC_HOST_MODULE_LOADED)
    return()
endif()

get_filename_component(ASC_HOST_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT EXISTS "${ASC_HOST_ROOT}/bin/ascendc-host-cc")
    message(FATAL_ERROR "ASC (host mode): ${ASC_HOST_ROOT}/bin/ascendc-host-cc is missing; "
                        "lay the root out again with `cargo xtask emu-root`.")
endif()
list(APPEND CMAKE_MODULE_PATH "${ASC_HOST_ROOT}/asc-host/cmake/asc_modules")
set(ASC_FOUND TRUE)
set(_ASC_HOST_MODULE_LOADED TRUE)
