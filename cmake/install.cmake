# install(), the exported pipesim:: targets, pipesimConfig.cmake with its version file, and
# the Debian package (CPack). Included by the top-level CMakeLists.txt after every module.
#
#   cmake --install build --prefix /opt/pipesim      the CLI, the libraries, the headers,
#                                                    the CMake package, the Python module
#   cpack --config build/CPackConfig.cmake -G DEB    pipesim_<version>_<arch>.deb
#
# Headers go to <prefix>/include/pipesim/<module>/, and both <prefix>/include and
# <prefix>/include/pipesim are on the targets' include path: consumers write
# #include <pipesim/sim/engine.hpp>, pipesim's own headers keep including "schedules/op.hpp".
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(pipesim_libraries core schedules cost_models sim assess traces kernels executor)
if(TARGET pipesim_kernels_cuda)
  list(APPEND pipesim_libraries kernels_cuda executor_cuda)
endif()
foreach(name ${pipesim_libraries})
  set_target_properties(pipesim_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(pipesim_${name} PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/pipesim>)
  list(APPEND pipesim_install_targets pipesim_${name})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${name}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pipesim/${name}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()
# kernels_cuda's headers live in kernels/cuda/ and executor_cuda's in executor/, installed with
# kernels/ and executor/ above.
if(TARGET pipesim_kernels_cuda)
  foreach(name kernels_cuda executor_cuda)
    install(CODE "file(REMOVE_RECURSE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/pipesim/${name}\")")
  endforeach()
endif()
# Linked PRIVATE by every library (warning flags only): exported so that the static
# libraries' link interface resolves; it adds nothing to a consumer's compile.
set_target_properties(pipesim_warnings PROPERTIES EXPORT_NAME warnings)
install(TARGETS ${pipesim_install_targets} pipesim_warnings EXPORT pipesimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS pipesim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The CUDA plugin, where the loader looks from bin/ (executor/cuda_plugin.hpp): opened by
# --backend cuda only, so the package runs on machines without CUDA as long as no run asks for it.
if(TARGET pipesim_cuda_plugin)
  install(TARGETS pipesim_cuda_plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/pipesim)
endif()
install(EXPORT pipesimTargets NAMESPACE pipesim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pipesim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pipesimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pipesimConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pipesim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pipesimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pipesimConfig.cmake ${PROJECT_BINARY_DIR}/pipesimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pipesim)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/schedule-format.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- the Debian package --------------------------------------------------------------
set(CPACK_PACKAGE_NAME pipesim)
set(CPACK_PACKAGE_VENDOR "pipesim")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Pipeline-parallel training schedule simulator (CLI, C++ libraries, Python module)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "pipesim developers <pipesim@localhost>")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Run time: the C++ runtime; the Python module needs Debian's python3 and numpy. Building
# against the installed headers needs the -dev packages pipesim itself builds with.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1, zlib1g")
if(pipesim_have_mpi)  # the binary links Open MPI (PIPESIM_MPI); mpirun comes with openmpi-bin
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi3")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin, ")
endif()
if(pipesim_have_jemalloc)  # the executable links jemalloc (PIPESIM_JEMALLOC, tools/allocator.cpp)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libjemalloc2")
endif()
string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libboost-graph-dev, nlohmann-json3-dev, libeigen3-dev, zlib1g-dev, cmake")
include(CPack)
