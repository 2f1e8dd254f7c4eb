# ExoHL.cmake: generate C from exo_hl kernel files at build time.
#
#   find_package(ExoHL REQUIRED)   # cmake -DExoHL_DIR="$(python -m exo_hl --cmake-dir)"
#   exo_hl_add_kernels(kernels SOURCE kernels.py)
#   target_link_libraries(app PRIVATE kernels)
#
# exo_hl_add_kernels(<name> SOURCE <file.py>
#                    [STEM <stem>] [PROCS <proc>...] [OUTPUT_DIR <dir>]
#                    [DEPENDS <file>...])
#
# Adds the static library <name>, built from <stem>.c, which
# `python -m exo_hl compile` writes at build time into OUTPUT_DIR (default
# ${CMAKE_CURRENT_BINARY_DIR}/exo_hl_<name>); its header <stem>.h is on the
# library's public include path. STEM defaults to the file's stem, PROCS to
# the file's own procedures (its __all__ when it has one). The C is made
# again when the kernel file, or any Python module the kernels came from
# (the depfile exo_hl writes), changes; DEPENDS adds more files.
#
# The interpreter: the first of these that can `import exo_hl` --
# EXO_HL_PYTHON (a CMake or environment variable), the interpreter of the
# environment this module is installed in, $VIRTUAL_ENV's, then every
# python3/python on PATH in order. None: configuring stops and says so.
# The choice is cached as EXO_HL_PYTHON_EXECUTABLE.

if(POLICY CMP0116)
  # depfile paths are relative to the current binary directory
  cmake_policy(SET CMP0116 NEW)
endif()

set(_EXO_HL_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(_exo_hl_has_exo_hl python out_var)
  set(${out_var} FALSE PARENT_SCOPE)
  if(python AND EXISTS "${python}" AND NOT IS_DIRECTORY "${python}")
    execute_process(COMMAND "${python}" -c "import exo_hl"
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set(${out_var} TRUE PARENT_SCOPE)
    endif()
  endif()
endfunction()

function(_exo_hl_find_python out_var)
  if(EXO_HL_PYTHON_EXECUTABLE)
    _exo_hl_has_exo_hl("${EXO_HL_PYTHON_EXECUTABLE}" ok)
    if(ok)
      set(${out_var} "${EXO_HL_PYTHON_EXECUTABLE}" PARENT_SCOPE)
      return()
    endif()
  endif()
  set(candidates)
  if(EXO_HL_PYTHON)
    list(APPEND candidates "${EXO_HL_PYTHON}")
  elseif(DEFINED ENV{EXO_HL_PYTHON})
    list(APPEND candidates "$ENV{EXO_HL_PYTHON}")
  endif()
  if(candidates)
    # asked for explicitly: that one or an error, never another
    list(GET candidates 0 asked)
    _exo_hl_has_exo_hl("${asked}" ok)
    if(NOT ok)
      message(FATAL_ERROR
        "exo_hl: EXO_HL_PYTHON is '${asked}', which cannot import exo_hl "
        "(install it there: ${asked} -m pip install exo_hl)")
    endif()
    set(EXO_HL_PYTHON_EXECUTABLE "${asked}" CACHE FILEPATH
        "The Python interpreter that runs exo_hl" FORCE)
    set(${out_var} "${asked}" PARENT_SCOPE)
    return()
  endif()
  # installed as <prefix>/lib/pythonX.Y/site-packages/exo_hl/cmake
  get_filename_component(prefix "${_EXO_HL_MODULE_DIR}/../../../../.."
                         ABSOLUTE)
  list(APPEND candidates "${prefix}/bin/python3" "${prefix}/bin/python"
       "${prefix}/Scripts/python.exe")
  if(DEFINED ENV{VIRTUAL_ENV})
    list(APPEND candidates "$ENV{VIRTUAL_ENV}/bin/python3"
         "$ENV{VIRTUAL_ENV}/bin/python" "$ENV{VIRTUAL_ENV}/Scripts/python.exe")
  endif()
  if(WIN32)
    set(path_dirs "$ENV{PATH}")
  else()
    string(REPLACE ":" ";" path_dirs "$ENV{PATH}")
  endif()
  foreach(dir IN LISTS path_dirs)
    if(dir)
      list(APPEND candidates "${dir}/python3" "${dir}/python"
           "${dir}/python.exe")
    endif()
  endforeach()
  set(tried)
  foreach(python IN LISTS candidates)
    if(EXISTS "${python}" AND NOT IS_DIRECTORY "${python}")
      list(APPEND tried "${python}")
      _exo_hl_has_exo_hl("${python}" ok)
      if(ok)
        message(STATUS "exo_hl: using ${python}")
        set(EXO_HL_PYTHON_EXECUTABLE "${python}" CACHE FILEPATH
            "The Python interpreter that runs exo_hl" FORCE)
        set(${out_var} "${python}" PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  list(JOIN tried ", " tried_text)
  message(FATAL_ERROR
    "exo_hl: no Python interpreter here can import exo_hl (tried: "
    "${tried_text}). Activate the environment that has it, or configure "
    "with -DEXO_HL_PYTHON=/path/to/python.")
endfunction()

function(exo_hl_add_kernels name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SOURCE;STEM;OUTPUT_DIR"
                        "PROCS;DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "exo_hl_add_kernels(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCE)
    message(FATAL_ERROR "exo_hl_add_kernels(${name}): SOURCE <file.py> is required")
  endif()
  get_filename_component(source "${ARG_SOURCE}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "exo_hl_add_kernels(${name}): ${source} does not exist")
  endif()
  if(ARG_STEM)
    set(stem "${ARG_STEM}")
  else()
    get_filename_component(stem "${source}" NAME_WE)
  endif()
  if(ARG_OUTPUT_DIR)
    get_filename_component(out "${ARG_OUTPUT_DIR}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(out "${CMAKE_CURRENT_BINARY_DIR}/exo_hl_${name}")
  endif()
  _exo_hl_find_python(python)
  set(procs)
  foreach(p IN LISTS ARG_PROCS)
    list(APPEND procs --proc "${p}")
  endforeach()
  set(depfile_args)
  if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles" AND
     NOT CMAKE_VERSION VERSION_LESS 3.20)
    set(depfile_args DEPFILE "${out}/${stem}.d")
  endif()
  file(MAKE_DIRECTORY "${out}")
  add_custom_command(
    OUTPUT "${out}/${stem}.c" "${out}/${stem}.h"
    COMMAND "${python}" -m exo_hl compile "${source}" -o "${out}"
            --stem "${stem}" ${procs}
    DEPENDS "${source}" ${ARG_DEPENDS}
    ${depfile_args}
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    COMMENT "exo_hl: generating ${stem}.c from ${ARG_SOURCE}"
    VERBATIM)
  add_library(${name} STATIC "${out}/${stem}.c")
  target_include_directories(${name} PUBLIC "${out}")
  # after the user's flags: clang's -ffp-contract=fast would fuse a*b + c
  # despite the file's pragma (exo_hl/codegen_c/fp_mode.py)
  target_compile_options(${name} PRIVATE
    $<$<C_COMPILER_ID:GNU,Clang,AppleClang>:-ffp-contract=off>)
  if(UNIX)
    target_link_libraries(${name} PUBLIC m)
  endif()
endfunction()
