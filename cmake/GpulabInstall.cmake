# Install rules and the Debian package (CPack's DEB generator): the programs under bin/, what they
# read at run time under share/gpulab/ (found beside the program, engine/base/install_paths), the
# menu entry, icons, AppStream metadata and manual pages. scripts/package builds the .deb.

# The project's identity for desktops and software centres: one place to change when it is
# published under its own name.
set(GPULAB_APP_ID "io.github.gpulab.gpulab" CACHE STRING "the desktop/AppStream id")
set(GPULAB_HOMEPAGE "https://github.com/gpulab/gpulab" CACHE STRING "the project's home page")
set(GPULAB_HOMEPAGE_RAW "https://raw.githubusercontent.com/gpulab/gpulab/main" CACHE STRING
  "where the tree's files are served (the AppStream screenshot)")
set(GPULAB_MAINTAINER "gpulab <dev@gpulab.invalid>" CACHE STRING "the package's Maintainer")

set(gpulab_programs gpulab-cli)
if(GPULAB_GUI_ENABLED)
  list(APPEND gpulab_programs gpulab)
endif()
install(TARGETS ${gpulab_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(GPULAB_CUDA_ENABLED)
  # An install from a CUDA build keeps the toolkit's library folder (cuBLAS) in its search path,
  # as the build does; the package is built without CUDA and has none.
  set_target_properties(${gpulab_programs} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()

# The labs and demos are compiled into the programs; their files are installed too, for a teacher
# to read, copy and change (gpulab-cli lab run FILE, gpulab --setup FILE). Reference runs are read
# from here; the cluster scripts are examples to copy.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/labs ${PROJECT_SOURCE_DIR}/resources/demos
  ${PROJECT_SOURCE_DIR}/resources/reference-runs ${PROJECT_SOURCE_DIR}/resources/cluster
  DESTINATION ${CMAKE_INSTALL_DATADIR}/gpulab
  PATTERN "*.slurm" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)  # a script with its #! line, as sbatch or a user runs it

set(desktop_dir ${PROJECT_SOURCE_DIR}/resources/desktop)
if(GPULAB_GUI_ENABLED)
  install(FILES ${desktop_dir}/gpulab.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications
    RENAME ${GPULAB_APP_ID}.desktop)
  install(FILES ${desktop_dir}/gpulab.svg
    DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps RENAME ${GPULAB_APP_ID}.svg)
  foreach(size 16 32 48 64 128 256)
    install(FILES ${desktop_dir}/gpulab-${size}.png
      DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
      RENAME ${GPULAB_APP_ID}.png)
  endforeach()
  configure_file(${desktop_dir}/gpulab.metainfo.xml.in
    ${PROJECT_BINARY_DIR}/generated/${GPULAB_APP_ID}.metainfo.xml @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/generated/${GPULAB_APP_ID}.metainfo.xml
    DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
endif()

# Manual pages, written in roff (docs/man/), compressed as Debian wants them (gzip -9n: no name
# or time stamp, so the same page gives the same bytes).
find_program(GPULAB_GZIP gzip)
file(GLOB gpulab_man_pages CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.1)
if(NOT GPULAB_GUI_ENABLED)
  list(FILTER gpulab_man_pages EXCLUDE REGEX "/gpulab\\.1$")
endif()
set(gpulab_man_outputs "")
foreach(page IN LISTS gpulab_man_pages)
  get_filename_component(page_name ${page} NAME)
  set(out ${PROJECT_BINARY_DIR}/man/${page_name}.gz)
  add_custom_command(OUTPUT ${out} COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
    COMMAND ${GPULAB_GZIP} -9n -c ${page} > ${out} DEPENDS ${page} VERBATIM)
  list(APPEND gpulab_man_outputs ${out})
endforeach()
add_custom_target(gpulab_man ALL DEPENDS ${gpulab_man_outputs})
install(FILES ${gpulab_man_outputs} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Debian's documentation folder: the copyright file and the changelog every package carries.
set(doc_dir ${CMAKE_INSTALL_DATADIR}/doc/gpulab)
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/copyright DESTINATION ${doc_dir})
set(changelog ${PROJECT_BINARY_DIR}/generated/changelog.gz)
add_custom_command(OUTPUT ${changelog}
  COMMAND ${GPULAB_GZIP} -9n -c ${PROJECT_SOURCE_DIR}/resources/desktop/changelog > ${changelog}
  DEPENDS ${PROJECT_SOURCE_DIR}/resources/desktop/changelog VERBATIM)
add_custom_target(gpulab_changelog ALL DEPENDS ${changelog})
install(FILES ${changelog} DESTINATION ${doc_dir})

# The package. Its Depends come from the libraries the programs link (dpkg-shlibdeps). It is made
# from a build without CUDA (scripts/package configures one, or takes one with --from): a CUDA
# build links cuBLAS, which no Debian package provides, so its programs would not start where the
# toolkit is missing.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpulab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GPULAB_MAINTAINER}")
# A Debian package installs into /usr whatever the build's own prefix (lintian refuses
# /usr/local): nothing compiled into the programs names the prefix, they find their files beside
# themselves (io/install_paths), so any build without CUDA can be packaged.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Read by scripts/package (CPackConfig.cmake), which refuses to package a CUDA build.
set(CPACK_GPULAB_CUDA ${GPULAB_CUDA_ENABLED})
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "learn GPU-accelerated deep learning by measuring it")
# The long description under the summary (CPack puts the summary first and indents each line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "gpulab trains a small convolutional network on MNIST on the CPU, on one
GPU or on several, and shows live plots of loss, accuracy, step time and
the hardware's utilization, memory, power and temperature. It has guided
labs, classroom races and chart export. This build trains on the CPU; GPU
training needs a build from source with the CUDA toolkit.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${GPULAB_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(GPULAB_MPI_ENABLED)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS openmpi-bin)  # mpirun, for --dist mpi
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
  GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)
