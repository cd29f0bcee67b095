# planctl_pc.cmake - writes planctl.pc at install time, from planctl.pc.in,
# for the prefix being installed to: `cmake --install build --prefix DIR`
# chooses it after configuration, so the file cannot be written earlier.
#
# Expects PC_IN, PC_OUT, PC_VERSION, PC_LIBDIR_REL and PC_INCLUDEDIR_REL
# (CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR, relative or absolute);
# CMAKE_INSTALL_PREFIX is the install script's, i.e. the one chosen now.
set(PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(kind LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${PC_${kind}_REL}")
        set(PC_${kind} "${PC_${kind}_REL}")
    else()
        set(PC_${kind} "\${prefix}/${PC_${kind}_REL}")
    endif()
endforeach()
configure_file("${PC_IN}" "${PC_OUT}" @ONLY)
