# run_to_file.cmake - runs a program and writes what it prints to a file,
# failing the build when it fails; the build uses it to generate the man
# page and the bash completion from the built planctl, so neither is
# committed and neither can drift from the command table.
#
# Run as: cmake -DPROGRAM=path/to/planctl -DARG=__man -DOUT=planctl.1
# (ARG may be a list: "-DARG=__man;planctl-json.7")
#               -P run_to_file.cmake

execute_process(
    COMMAND "${PROGRAM}" ${ARG}
    OUTPUT_FILE "${OUT}.tmp"
    ERROR_VARIABLE err
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    file(REMOVE "${OUT}.tmp")
    message(FATAL_ERROR "${PROGRAM} ${ARG} failed (${rc}): ${err}")
endif()
# A half-written file must never look generated.
file(RENAME "${OUT}.tmp" "${OUT}")
