# ctest's cli_links_no_window: gpulab-cli draws chart files with the chart library (ui/charts) and
# must not carry the window. Fails, naming what it found, when gpulab_ui is among the libraries it
# links (LINKS: the targets tests/CMakeLists.txt followed from gpulab-cli, comma-separated), when
# a class of the window is among the binary's symbols (nm -C), or when no symbol of the chart
# library is (then nm read nothing to check).
# cmake -DNM=<nm> -DBINARY=<gpulab-cli> -DLINKS=<a,b,...> -P check_cli_links.cmake
cmake_minimum_required(VERSION 3.25)
string(REPLACE "," ";" links "${LINKS}")
if("gpulab_ui" IN_LIST links)
  message(FATAL_ERROR "gpulab-cli links gpulab_ui, the window library (it links: ${LINKS}); "
                      "it must link gpulab_charts instead (app/CMakeLists.txt)")
endif()
if(NOT "gpulab_charts" IN_LIST links)
  message(FATAL_ERROR "gpulab-cli does not link gpulab_charts (it links: ${LINKS})")
endif()
execute_process(COMMAND ${NM} -C ${BINARY} OUTPUT_VARIABLE symbols ERROR_VARIABLE error
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${NM} -C ${BINARY} failed (${status}): ${error}")
endif()
if(NOT symbols MATCHES "gpulab::ui::write_lab_report")
  message(FATAL_ERROR "${BINARY}: no symbol of the chart library (write_lab_report) found; "
                      "nm read nothing to check (a stripped binary?)")
endif()
set(found "")
foreach(window_class MainWindow DevicePicker ExperimentPanel RunsPanel RunStore CompareView)
  if(symbols MATCHES "gpulab::ui::${window_class}::")
    list(APPEND found ${window_class})
  endif()
endforeach()
if(found)
  message(FATAL_ERROR "${BINARY} holds window classes (${found}): gpulab-cli must link "
                      "gpulab_charts, not gpulab_ui (app/CMakeLists.txt)")
endif()
message(STATUS "${BINARY}: chart library linked, no window class")
