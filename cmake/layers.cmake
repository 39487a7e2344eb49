# The layers of the library and what each may use (docs/architecture.md):
#
#   core <- nodes <- training -> serialization -> core;  server (nodeflow serve)
#   above them; apps (with server), capi (the C API of libnodeflow.so) and python
#   (the Python module) on top of all.
#
# A layer may include the headers of the layers it uses and its own; a layer's
# detail/ folder is private to it. The build checks every layer's includes
# (check_layer_includes.cmake, before the layer compiles) and ctest checks that
# each library refers only to symbols of the layers it uses
# (check_layer_symbols.cmake). Read in project and in script mode.
set(NODEFLOW_LAYERS core nodes serialization training)
set(NODEFLOW_LAYER_USES_core "")
set(NODEFLOW_LAYER_USES_nodes core)
set(NODEFLOW_LAYER_USES_serialization core)
set(NODEFLOW_LAYER_USES_training core nodes serialization)
# The HTTP server of `nodeflow serve` (docs/server.md): above the library
# layers, used by the command line only. Not part of the `nodeflow` library.
set(NODEFLOW_APP_LAYERS server)
set(NODEFLOW_LAYER_USES_server core nodes serialization training)
# The top layers: the command line, the C API and the Python module. Each uses every
# library layer and no other top layer (the command line also the server); nothing
# includes them.
set(NODEFLOW_TOP_LAYERS apps capi python)
set(NODEFLOW_LAYER_USES_apps core nodes serialization training server)
set(NODEFLOW_LAYER_USES_capi core nodes serialization training)
set(NODEFLOW_LAYER_USES_python core nodes serialization training)

# "core/ and nodes/": what `layer` may include, for messages.
function(nodeflow_layer_allowed_text layer out)
  set(text "")
  foreach(used ${NODEFLOW_LAYER_USES_${layer}} ${layer})
    if(text)
      string(APPEND text ", ")
    endif()
    string(APPEND text "${used}/")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The 1-based number of the first line of `content` that is `line`.
function(nodeflow_line_number content line out)
  string(FIND "\n${content}" "\n${line}" at)
  math(EXPR through "${at} + 1")
  string(SUBSTRING "\n${content}" 0 ${through} before)
  string(REGEX REPLACE "[^\n]" "" newlines "${before}")
  string(LENGTH "${newlines}" number)
  set(${out} ${number} PARENT_SCOPE)
endfunction()

# Appends to `out` one "<file>:<line>: error: ..." message per include of a
# .cpp/.hpp under `root`/`layer`/ that the rules refuse (<file> relative to
# `root`). An include outside the project's folders (<vector>, <Eigen/Core>,
# a header next to the includer) is not the rules' business, but "../" is
# refused: includes name their layer from the source root.
function(nodeflow_layer_include_errors root layer out)
  nodeflow_layer_allowed_text(${layer} allowed_text)
  set(known ${NODEFLOW_LAYERS} ${NODEFLOW_APP_LAYERS} ${NODEFLOW_TOP_LAYERS})
  set(errors "")
  file(GLOB_RECURSE files "${root}/${layer}/*.cpp" "${root}/${layer}/*.hpp")
  list(SORT files)
  foreach(file ${files})
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    if(NOT lines)
      continue()
    endif()
    file(RELATIVE_PATH shown "${root}" "${file}")
    file(READ "${file}" content)
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"]")
        continue()
      endif()
      set(directive "${CMAKE_MATCH_0}")
      set(header "${CMAKE_MATCH_1}")
      set(problem "")
      if(header MATCHES "(^|/)\\.\\.(/|$)")
        set(problem "includes name their layer folder from the source root, without '..'")
      elseif(header MATCHES "^([^/]+)/(.*)$")
        set(top "${CMAKE_MATCH_1}")
        set(rest "${CMAKE_MATCH_2}")
        if(top IN_LIST known)
          if(NOT top STREQUAL layer AND NOT top IN_LIST NODEFLOW_LAYER_USES_${layer})
            set(problem "${layer}/ may include only ${allowed_text} (cmake/layers.cmake)")
          elseif(NOT top STREQUAL layer AND rest MATCHES "(^|/)detail/")
            set(problem "${top}/detail/ is private to ${top}/ (cmake/layers.cmake)")
          endif()
        endif()
      endif()
      if(problem)
        nodeflow_line_number("${content}" "${line}" number)
        list(APPEND errors "${shown}:${number}: error: ${directive}: ${problem}")
      endif()
    endforeach()
  endforeach()
  set(${out} "${errors}" PARENT_SCOPE)
endfunction()

# Project mode: `target` builds only after the includes of `layer`/ passed the
# rules; the check reruns when one of `files` (the layer's sources and headers)
# or the rules change.
function(nodeflow_check_layer_includes target layer)
  set(stamp ${PROJECT_BINARY_DIR}/layer_checks/${layer}.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DLAYER=${layer} -DSTAMP=${stamp}
      -P ${PROJECT_SOURCE_DIR}/cmake/check_layer_includes.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/check_layer_includes.cmake
      ${PROJECT_SOURCE_DIR}/cmake/layers.cmake
    COMMENT "Checking the includes of ${layer}/ against the layer rules"
    VERBATIM)
  add_custom_target(${target}_includes DEPENDS ${stamp})
  add_dependencies(${target} ${target}_includes)
endfunction()
