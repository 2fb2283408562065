# The layering check (docs/design.md §7), run by the build before anything compiles:
#   cmake -DSRC=<dir holding the layer folders> [-DPYTHON=<the python layer's folder>]
#         -P check_layering.cmake
# The python layer (the binding's sources) lives in python/src, beside the package, rather than
# in SRC/python: PYTHON names its folder. The exemption lists below name its files python/<name>.
# Fails (a fatal error, so the build stops) when
#   - a file of one layer includes a header of a layer that is not below it,
#   - a layer's CMakeLists.txt links a remat library of a layer that is not below it,
#   - a header has no source file of the same name or a source file no header, outside the
#     short lists below (types-only headers and program entry points).
if(NOT SRC)
  message(FATAL_ERROR "check_layering: pass -DSRC=<source folder>")
endif()
get_filename_component(SRC "${SRC}" ABSOLUTE)
if(PYTHON)
  get_filename_component(PYTHON "${PYTHON}" ABSOLUTE)
endif()

# Each layer and the layers it may use (itself included).
set(allowed_core core)
set(allowed_model model core)
set(allowed_zoo zoo model core)
set(allowed_strategies strategies core)
set(allowed_solvers solvers strategies core)
set(allowed_planning planning solvers strategies core)
set(allowed_onnx onnx model core)
set(allowed_exec exec zoo model core)
set(allowed_python python planning solvers strategies zoo model core)
set(allowed_cli cli exec onnx planning solvers strategies zoo model core)
set(layers core model zoo strategies solvers planning onnx exec python cli)

# Headers that only declare types, constants and inline helpers, and program entry points.
set(header_only core/errors.h core/json_fields.h cli/commands.h planning/work_progress.h planning/time_left.h
    zoo/networks.h)
set(entry_points cli/main.cc cli/run_main.cc python/module.cc)

# Sets `${out}` to TRUE when `layer` uses `used`, a layer it may not use.
function(uses_upward layer used out)
  list(FIND layers "${used}" is_layer)
  list(FIND allowed_${layer} "${used}" ok)
  if(is_layer GREATER -1 AND ok EQUAL -1)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

set(problems "")
foreach(layer IN LISTS layers)
  set(dir "${SRC}/${layer}")
  set(shown_dir "${layer}")  # how messages name the folder
  if(layer STREQUAL "python" AND PYTHON)
    set(dir "${PYTHON}")
    set(shown_dir "${PYTHON}")
  endif()
  if(NOT IS_DIRECTORY "${dir}")
    continue()
  endif()
  file(GLOB names RELATIVE "${dir}" "${dir}/*.h" "${dir}/*.cc")
  foreach(name IN LISTS names)
    set(file "${layer}/${name}")
    set(shown "${shown_dir}/${name}")
    file(STRINGS "${dir}/${name}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" used "${line}")
      uses_upward(${layer} "${used}" upward)
      if(upward)
        string(APPEND problems "\n  ${shown}: ${line} (${layer} may use: ${allowed_${layer}})")
      endif()
    endforeach()
    # Pairing: x.h with x.cc.
    if(name MATCHES "\\.h$")
      string(REGEX REPLACE "\\.h$" ".cc" partner "${name}")
      list(FIND header_only "${file}" exempt)
    else()
      string(REGEX REPLACE "\\.cc$" ".h" partner "${name}")
      list(FIND entry_points "${file}" exempt)
    endif()
    if(exempt EQUAL -1 AND NOT EXISTS "${dir}/${partner}")
      string(APPEND problems "\n  ${shown}: no ${partner} beside it")
    endif()
  endforeach()
  if(EXISTS "${dir}/CMakeLists.txt")
    file(READ "${dir}/CMakeLists.txt" cmake_text)
    string(REGEX MATCHALL "remat_[a-z_]+" linked "${cmake_text}")
    foreach(library IN LISTS linked)
      string(REGEX REPLACE "^remat_([a-z]+).*" "\\1" used "${library}")
      uses_upward(${layer} "${used}" upward)
      if(upward)
        string(APPEND problems "\n  ${shown_dir}/CMakeLists.txt: links ${library}")
      endif()
    endforeach()
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "layering check failed (a layer may use only the layers below it):${problems}")
endif()
