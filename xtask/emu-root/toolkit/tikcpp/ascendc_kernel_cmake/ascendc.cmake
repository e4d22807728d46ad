# ascendc.cmake of an emulator root (`cargo xtask emu-root`): CANN's functions for kernel
# libraries, in host mode. The kernel sources are compiled by the root's ASC language
# (bin/ascendc-host-cc, ascendc-build's host-mode build path for C++ programs): their kernels for
# the host CPU against the AscendC host layer, their host code as C++ with each
# `kernel<<<blocks, l2ctrl, stream>>>(args)` launching through the runtime, so that a program
# linked with the library runs its kernels on the emulator's streams. Written for ascendcl-rs.
#
#   ascendc_library(NAME STATIC|SHARED src...)     a library of the kernels and their launchers;
#                                                  linking it links the root's runtime library
#   ascendc_fatbin_library(NAME src)               the kernels' binary alone, for
#                                                  aclrtBinaryLoadFromFile: built as
#                                                  NAME/NAME.o in the build tree, installed to
#                                                  <prefix>/fatbin/NAME/NAME.o
#   ascendc_compile_definitions(NAME [PRIVATE|PUBLIC|INTERFACE] def...)
#   ascendc_compile_options(NAME [PRIVATE|PUBLIC|INTERFACE] option...)
#   ascendc_include_directories(NAME [PRIVATE|PUBLIC|INTERFACE] dir...)
#
# SOC_VERSION (from the environment, as the samples set it) picks nothing here: every SoC's
# kernels run on the host. RUN_MODE (npu, cpu, sim) is accepted for the same reason.
include_guard(GLOBAL)

get_filename_component(_ascendc_emu_here "${CMAKE_CURRENT_LIST_FILE}" REALPATH)
get_filename_component(_ascendc_emu_here "${_ascendc_emu_here}" DIRECTORY)
# <root>/<arch>-linux/tikcpp/ascendc_kernel_cmake
get_filename_component(ASCENDC_EMU_ROOT "${_ascendc_emu_here}/../../.." ABSOLUTE)
if(NOT EXISTS "${ASCENDC_EMU_ROOT}/lib64/cmake/asc-config.cmake")
    message(FATAL_ERROR "ascendc.cmake (host mode): ${ASCENDC_EMU_ROOT} has no ASC language "
                        "(lib64/cmake/asc-config.cmake); lay the root out again with "
                        "`cargo xtask emu-root`.")
endif()
set(ASC_DIR "${ASCENDC_EMU_ROOT}/lib64/cmake" CACHE PATH "The ASC package of the emulator root")
find_package(ASC REQUIRED CONFIG PATHS "${ASCENDC_EMU_ROOT}/lib64/cmake" NO_DEFAULT_PATH)
enable_language(ASC)

set(ASCENDC_EMU_RUNTIME "${ASCENDC_EMU_ROOT}/lib64/libacl_rt.so")

# Sources given relative to the calling CMakeLists.
function(_ascendc_emu_sources out)
    set(srcs "")
    foreach(s IN LISTS ARGN)
        get_filename_component(abs "${s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
        list(APPEND srcs "${abs}")
    endforeach()
    set(${out} "${srcs}" PARENT_SCOPE)
endfunction()

function(ascendc_library target kind)
    string(TOUPPER "${kind}" kind)
    if(NOT kind MATCHES "^(STATIC|SHARED)$")
        message(FATAL_ERROR "ascendc_library(${target} ${kind} ...): the kind is STATIC or SHARED")
    endif()
    _ascendc_emu_sources(srcs ${ARGN})
    if(srcs STREQUAL "")
        message(FATAL_ERROR "ascendc_library(${target} ${kind}): no kernel sources")
    endif()
    set_source_files_properties(${srcs} PROPERTIES LANGUAGE ASC)
    add_library(${target} ${kind} ${srcs})
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE ASC POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${target} PUBLIC "${ASCENDC_EMU_ROOT}/include")
    # The launchers call the runtime: whoever links the library links the runtime.
    target_link_libraries(${target} PUBLIC "${ASCENDC_EMU_RUNTIME}")
endfunction()

function(ascendc_fatbin_library target)
    _ascendc_emu_sources(srcs ${ARGN})
    list(LENGTH srcs n)
    if(NOT n EQUAL 1)
        message(FATAL_ERROR "ascendc_fatbin_library(${target}): host mode builds the binary of one "
                            "kernel source (given: ${n})")
    endif()
    # The source's kernel binary, as the driver builds it for the object it compiles.
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
    set(out "${dir}/${target}.o")
    add_custom_command(
        OUTPUT "${out}"
        COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
        COMMAND "${CMAKE_ASC_COMPILER}" -std=c++17 -I "${ASCENDC_EMU_ROOT}/include"
                -c "${srcs}" -o "${dir}/${target}.host.o" --kernel-binary "${out}"
        DEPENDS "${srcs}"
        COMMENT "Building the kernel binary ${target}/${target}.o (host mode)"
        VERBATIM)
    add_custom_target(${target} ALL DEPENDS "${out}")
    set_target_properties(${target} PROPERTIES ASCENDC_KERNEL_BINARY "${out}")
    install(FILES "${out}" DESTINATION "fatbin/${target}")
endfunction()

# The scope keyword (PRIVATE when none is given) and the rest.
macro(_ascendc_emu_scope)
    set(_scope PRIVATE)
    set(_items ${ARGN})
    list(LENGTH _items _n)
    if(_n GREATER 0)
        list(GET _items 0 _first)
        if(_first MATCHES "^(PRIVATE|PUBLIC|INTERFACE)$")
            set(_scope "${_first}")
            list(REMOVE_AT _items 0)
        endif()
    endif()
endmacro()

function(ascendc_compile_definitions target)
    _ascendc_emu_scope(${ARGN})
    set(defs "")
    foreach(d IN LISTS _items)
        string(REGEX REPLACE "^-D" "" d "${d}")
        list(APPEND defs "${d}")
    endforeach()
    target_compile_definitions(${target} ${_scope} ${defs})
endfunction()

function(ascendc_compile_options target)
    _ascendc_emu_scope(${ARGN})
    target_compile_options(${target} ${_scope} ${_items})
endfunction()

function(ascendc_include_directories target)
    _ascendc_emu_scope(${ARGN})
    target_include_directories(${target} ${_scope} ${_items})
endfunction()
