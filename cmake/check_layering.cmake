# The layering check (DESIGN §7), run by the build before anything compiles:
#   cmake -DSRC=<dir holding the layer folders> -P check_layering.cmake
# Fails (a fatal error, so the build stops) when
#   - a file of one layer includes a header of a layer that is not below it,
#   - a layer's CMakeLists.txt links a remat library of a layer that is not below it,
#   - a header has no source file of the same name or a source file no header, outside the
#     short lists below (types-only headers and program entry points).
if(NOT SRC)
  message(FATAL_ERROR "check_layering: pass -DSRC=<source folder>")
endif()
get_filename_component(SRC "${SRC}" ABSOLUTE)

# Each layer and the layers it may use (itself included).
set(allowed_core core)
set(allowed_zoo zoo core)
set(allowed_strategies strategies core)
set(allowed_solvers solvers strategies core)
set(allowed_onnx onnx zoo core)
set(allowed_exec exec zoo core)
set(allowed_python python solvers strategies zoo core)
set(allowed_cli cli exec onnx solvers strategies zoo core)
set(layers core zoo strategies solvers onnx exec python cli)

# Headers that only declare types, constants and inline helpers, and program entry points.
set(header_only core/errors.h core/json_fields.h cli/commands.h zoo/networks.h)
set(entry_points cli/main.cc cli/run_main.cc python/bindings.cc)

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
  if(NOT IS_DIRECTORY "${SRC}/${layer}")
    continue()
  endif()
  file(GLOB files RELATIVE "${SRC}" "${SRC}/${layer}/*.h" "${SRC}/${layer}/*.cc")
  foreach(file IN LISTS files)
    file(STRINGS "${SRC}/${file}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" used "${line}")
      uses_upward(${layer} "${used}" upward)
      if(upward)
        string(APPEND problems "\n  ${file}: ${line} (${layer} may use: ${allowed_${layer}})")
      endif()
    endforeach()
    # Pairing: x.h with x.cc.
    if(file MATCHES "\\.h$")
      string(REGEX REPLACE "\\.h$" ".cc" partner "${file}")
      list(FIND header_only "${file}" exempt)
    else()
      string(REGEX REPLACE "\\.cc$" ".h" partner "${file}")
      list(FIND entry_points "${file}" exempt)
    endif()
    if(exempt EQUAL -1 AND NOT EXISTS "${SRC}/${partner}")
      string(APPEND problems "\n  ${file}: no ${partner} beside it")
    endif()
  endforeach()
  if(EXISTS "${SRC}/${layer}/CMakeLists.txt")
    file(READ "${SRC}/${layer}/CMakeLists.txt" cmake_text)
    string(REGEX MATCHALL "remat_[a-z_]+" linked "${cmake_text}")
    foreach(library IN LISTS linked)
      string(REGEX REPLACE "^remat_([a-z]+).*" "\\1" used "${library}")
      uses_upward(${layer} "${used}" upward)
      if(upward)
        string(APPEND problems "\n  ${layer}/CMakeLists.txt: links ${library}")
      endif()
    endforeach()
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "layering check failed (DESIGN §7: dependencies point down only):${problems}")
endif()
