# The version the binaries print (docs/decisions/0121): project(VERSION),
# plus the git revision when configured from a checkout. Read at
# configure time, so a build does not run git and is not made dirty by
# it; configure reruns by itself when HEAD moves (the files git changes
# on a commit or checkout are configure dependencies).
set(PGN_GIT_REV "")
set(PGN_GIT_DATE "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
	execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
		WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
		OUTPUT_VARIABLE PGN_GIT_REV RESULT_VARIABLE rc
		OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
	if(NOT rc EQUAL 0)
		set(PGN_GIT_REV "")
	endif()
	execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%cs
		WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
		OUTPUT_VARIABLE PGN_GIT_DATE RESULT_VARIABLE rc
		OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
	if(NOT rc EQUAL 0)
		set(PGN_GIT_DATE "")
	endif()
	execute_process(COMMAND ${GIT_EXECUTABLE} symbolic-ref -q HEAD
		WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
		OUTPUT_VARIABLE ref OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
	foreach(p HEAD packed-refs ${ref})
		execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path ${p}
			WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
			OUTPUT_VARIABLE gp OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
		if(gp AND NOT IS_ABSOLUTE "${gp}")
			set(gp ${PROJECT_SOURCE_DIR}/${gp})
		endif()
		if(gp AND EXISTS "${gp}")
			set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY
				CMAKE_CONFIGURE_DEPENDS "${gp}")
		endif()
	endforeach()
endif()
if(PGN_GIT_REV)
	set(PGN_VERSION_STRING "${PROJECT_VERSION} (git ${PGN_GIT_REV})")
else()
	set(PGN_VERSION_STRING "${PROJECT_VERSION}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in
	${PROJECT_BINARY_DIR}/pgn_version.h @ONLY)
