# cmake -DROOT=<source dir> -DLAYER=<layer> [-DSTAMP=<file>] -P check_layer_includes.cmake
#
# Fails, naming the file, the line and the rule, when a file of ROOT/LAYER/
# includes a header its layer may not use (cmake/layers.cmake); else touches
# STAMP. The build runs it before each layer's library compiles, so a wrong
# include is a build error even though the header would be found.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)

nodeflow_layer_include_errors("${ROOT}" "${LAYER}" errors)
if(errors)
  foreach(error IN LISTS errors)
    message(NOTICE "${error}")
  endforeach()
  list(LENGTH errors count)
  message(FATAL_ERROR "${count} include(s) of ${LAYER}/ break the layer rules (cmake/layers.cmake)")
endif()
if(STAMP)
  file(WRITE "${STAMP}" "")
endif()
