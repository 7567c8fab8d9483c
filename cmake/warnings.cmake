# Two INTERFACE targets that every target of the project links:
#
#	target_link_libraries(x PRIVATE pgn_warnings pgn_hardening)
#
# pgn_warnings: the warning set (with -Werror under PGN_WERROR), the same
# for gcc and clang in every build type. pgn_hardening: for optimised
# builds (Release, RelWithDebInfo, MinSizeRel), _FORTIFY_SOURCE=2,
# -fstack-protector-strong, PIE and full RELRO; off under PGN_SANITIZE and
# PGN_FUZZ, whose runtimes do that checking themselves (and FORTIFY's
# __*_chk functions would hide calls from their interceptors).
# See docs/decisions/0045-warnings-and-hardening-targets.md.

set(PGN_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wformat=2
	-Wstrict-prototypes -Wmissing-prototypes -Wvla -Wwrite-strings)
if(PGN_WERROR)
	list(APPEND PGN_WARNINGS -Werror)
endif()
add_library(pgn_warnings INTERFACE)
target_compile_options(pgn_warnings INTERFACE ${PGN_WARNINGS})

option(PGN_HARDEN "Harden optimised builds: _FORTIFY_SOURCE=2, stack protector, PIE, full RELRO" ON)
add_library(pgn_hardening INTERFACE)
if(PGN_HARDEN AND NOT PGN_SANITIZE AND NOT PGN_FUZZ)
	# _FORTIFY_SOURCE needs the optimiser (glibc warns without it); -U
	# first, for compilers (Ubuntu's) that already define it.
	set(pgn_optimised
		"$<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>,$<CONFIG:MinSizeRel>>")
	target_compile_options(pgn_hardening INTERFACE
		"$<${pgn_optimised}:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=2;-fstack-protector-strong;-fPIE>")
	target_link_options(pgn_hardening INTERFACE
		"$<${pgn_optimised}:-pie;LINKER:-z,relro,-z,now>")
	# PIE's relative relocations packed (DT_RELR, binutils 2.38, glibc
	# 2.36): the loader applies them in a fraction of the instructions,
	# every hook run (docs/decisions/0110-storage-seam.md).
	include(CheckLinkerFlag)
	check_linker_flag(C "LINKER:-z,pack-relative-relocs" PGN_HAVE_RELR)
	if(PGN_HAVE_RELR)
		target_link_options(pgn_hardening INTERFACE
			"$<${pgn_optimised}:LINKER:-z,pack-relative-relocs>")
	endif()
endif()
