# lib.sh - shell helpers for the tests of tests/install (sourced).

fail() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

# A directory the build named relative to the prefix (or absolute).
in_prefix() {
    case $1 in
    /*) echo "$1" ;;
    *) echo "$PLANCTL_PREFIX/$1" ;;
    esac
}

# has "WORDS" WORD: WORD is one of the words.
has() {
    case " $1 " in
    *" $2 "*) return 0 ;;
    *) return 1 ;;
    esac
}

# needs BINARY LIBPREFIX: the binary has a NEEDED entry starting so.
needs() {
    "$OBJDUMP" -p "$1" | awk '$1 == "NEEDED" { print $2 }' | grep -q "^$2"
}
