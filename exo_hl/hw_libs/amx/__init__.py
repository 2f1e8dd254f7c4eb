"""The Intel AMX hardware library (a user library: public API only): tile
registers as memories, the tile configuration as ``@config`` state, and the
tile instructions, made per tile register on demand."""
from .lib import (AMX_TILE, AMX_TILE0, AMX_TILE1, AMX_TILE2, AMX_TILE3,
                  AMX_TILE4, AMX_TILE5, AMX_TILE6, AMX_TILE7, CONFIGS,
                  ELEM_BYTES, FIELDS, INSTRS, MAX_COLSB, MAX_ROWS, MEMORIES,
                  N_TILES, TILES, AmxConfig, configure_tiles, ldtilecfg,
                  tdpbf16ps, tdpbssd, tdpbusd, tile_load, tile_store,
                  tile_zero)

__all__ = ["AMX_TILE", "AMX_TILE0", "AMX_TILE1", "AMX_TILE2", "AMX_TILE3",
           "AMX_TILE4", "AMX_TILE5", "AMX_TILE6", "AMX_TILE7", "CONFIGS",
           "ELEM_BYTES", "FIELDS", "INSTRS", "MAX_COLSB", "MAX_ROWS",
           "MEMORIES", "N_TILES", "TILES", "AmxConfig", "configure_tiles",
           "ldtilecfg", "tdpbf16ps", "tdpbssd", "tdpbusd", "tile_load",
           "tile_store", "tile_zero"]
