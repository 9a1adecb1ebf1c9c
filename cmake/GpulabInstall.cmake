# Install rules and the Debian package (CPack's DEB generator): the programs under bin/, what they
# read at run time under share/gpulab/ (found beside the program, engine/base/install_paths), the
# menu entry, icons, AppStream metadata and manual pages. scripts/package builds the .deb.

# The project's identity for desktops and software centres, and who the package is from: set by
# whoever builds the package for a site (docs/install.md, "What the package says about itself").
# The defaults claim nothing that is not so: no home page and no screenshot address (the fields are
# left out), and a Maintainer from Debian's DEBFULLNAME and DEBEMAIL where they are set, else an
# address under .invalid that scripts/package names as a placeholder.
set(GPULAB_APP_ID "io.github.gpulab.gpulab" CACHE STRING "the desktop/AppStream id")
set(GPULAB_HOMEPAGE "" CACHE STRING
  "the project's home page (the package's Homepage, AppStream's url; empty: none)")
set(GPULAB_SCREENSHOT_URL "" CACHE STRING
  "a screenshot's address for software centres, e.g. docs/window-1280x720-live.png on the \
project's site (empty: none)")
# A build configured before these defaults kept the old placeholder home page in its cache.
if(GPULAB_HOMEPAGE STREQUAL "https://github.com/gpulab/gpulab")
  set_property(CACHE GPULAB_HOMEPAGE PROPERTY VALUE "")
endif()
unset(GPULAB_HOMEPAGE_RAW CACHE)  # replaced by GPULAB_SCREENSHOT_URL
set(gpulab_default_maintainer "gpulab <dev@gpulab.invalid>")
if(NOT "$ENV{DEBEMAIL}" STREQUAL "")
  set(gpulab_default_maintainer "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
  string(STRIP "${gpulab_default_maintainer}" gpulab_default_maintainer)
endif()
set(GPULAB_MAINTAINER "${gpulab_default_maintainer}" CACHE STRING
  "the package's Maintainer, \"Name <address>\" (default: $DEBFULLNAME <$DEBEMAIL>)")
# The package's version is the project's (project() in CMakeLists.txt) and a Debian revision: a
# site that rebuilds the same version (another option, a fix of its own) raises the revision, and
# apt installs the rebuild over the old package.
set(GPULAB_DEB_REVISION "1" CACHE STRING
  "the Debian revision after the project's version: gpulab_<version>-<revision>_amd64.deb")
if(NOT GPULAB_DEB_REVISION MATCHES "^[0-9][A-Za-z0-9.+~]*$")
  message(FATAL_ERROR "gpulab: GPULAB_DEB_REVISION='${GPULAB_DEB_REVISION}' is not a Debian "
    "revision: a digit, then letters, digits and . + ~ (1, 2, 1+site1)")
endif()
set(GPULAB_DEB_VERSION "${PROJECT_VERSION}-${GPULAB_DEB_REVISION}")
# What is still a placeholder, one line each: configure prints them and scripts/package repeats
# them (CPackConfig.cmake's CPACK_GPULAB_PLACEHOLDERS). Each is set as a cmake -D option, or in
# scripts/package's environment.
set(gpulab_placeholders "")
if(GPULAB_MAINTAINER MATCHES "\\.invalid>?$" OR NOT GPULAB_MAINTAINER MATCHES "<.+@.+>$")
  list(APPEND gpulab_placeholders
    "Maintainer is a placeholder (${GPULAB_MAINTAINER}): set GPULAB_MAINTAINER to 'Name <address>'")
endif()
if(GPULAB_HOMEPAGE STREQUAL "")
  list(APPEND gpulab_placeholders "no home page (no Homepage, no AppStream url): set GPULAB_HOMEPAGE")
endif()
if(GPULAB_SCREENSHOT_URL STREQUAL "")
  list(APPEND gpulab_placeholders
    "no screenshot for software centres: set GPULAB_SCREENSHOT_URL")
endif()
foreach(line IN LISTS gpulab_placeholders)
  message(STATUS "gpulab: package: ${line}")
endforeach()

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
  # The home page and screenshot elements, or nothing where they are not set.
  set(GPULAB_METAINFO_HOMEPAGE "")
  if(NOT GPULAB_HOMEPAGE STREQUAL "")
    set(GPULAB_METAINFO_HOMEPAGE "<url type=\"homepage\">${GPULAB_HOMEPAGE}</url>")
  endif()
  set(GPULAB_METAINFO_SCREENSHOTS "")
  if(NOT GPULAB_SCREENSHOT_URL STREQUAL "")
    set(GPULAB_METAINFO_SCREENSHOTS "<screenshots>
    <screenshot type=\"default\">
      <caption>Training on the CPU with live loss, accuracy and hardware plots</caption>
      <image>${GPULAB_SCREENSHOT_URL}</image>
    </screenshot>
  </screenshots>")
  endif()
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

# Debian's documentation folder: the copyright file, the package's changelog (its first entry
# carries the package's version and Maintainer: resources/desktop/changelog.in) and the user
# documentation, README and docs/*.md, as the programs' manual beside the manual pages.
set(doc_dir ${CMAKE_INSTALL_DATADIR}/doc/gpulab)
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/copyright DESTINATION ${doc_dir})
configure_file(${PROJECT_SOURCE_DIR}/resources/desktop/changelog.in
  ${PROJECT_BINARY_DIR}/generated/changelog.Debian @ONLY)
set(changelog ${PROJECT_BINARY_DIR}/generated/changelog.Debian.gz)
add_custom_command(OUTPUT ${changelog}
  COMMAND ${GPULAB_GZIP} -9n -c ${PROJECT_BINARY_DIR}/generated/changelog.Debian > ${changelog}
  DEPENDS ${PROJECT_BINARY_DIR}/generated/changelog.Debian VERBATIM)
add_custom_target(gpulab_changelog ALL DEPENDS ${changelog})
install(FILES ${changelog} DESTINATION ${doc_dir})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${doc_dir})
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/lintian-overrides
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME gpulab)
file(GLOB gpulab_user_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${gpulab_user_docs} DESTINATION ${doc_dir}/docs)

# The package. Its Depends come from the libraries the programs link (dpkg-shlibdeps). It is made
# from a build without CUDA (scripts/package configures one, or takes one with --from): a CUDA
# build links cuBLAS, which no Debian package provides, so its programs would not start where the
# toolkit is missing.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpulab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE ${GPULAB_DEB_REVISION})  # Version: <version>-<revision>
set(CPACK_PACKAGE_CONTACT "${GPULAB_MAINTAINER}")
# A Debian package installs into /usr whatever the build's own prefix (lintian refuses
# /usr/local): nothing compiled into the programs names the prefix, they find their files beside
# themselves (io/install_paths), so any build without CUDA can be packaged.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Read by scripts/package (CPackConfig.cmake), which refuses to package a CUDA build.
set(CPACK_GPULAB_CUDA ${GPULAB_CUDA_ENABLED})
string(REPLACE ";" "|" CPACK_GPULAB_PLACEHOLDERS "${gpulab_placeholders}")
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
