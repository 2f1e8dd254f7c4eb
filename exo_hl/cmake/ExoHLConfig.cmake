# find_package(ExoHL) entry point: cmake -DExoHL_DIR="$(python -m exo_hl --cmake-dir)"
include("${CMAKE_CURRENT_LIST_DIR}/ExoHL.cmake")
set(ExoHL_FOUND TRUE)
