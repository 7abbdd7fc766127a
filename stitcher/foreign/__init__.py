"""Collections stitcher did not make. The public entry points are in stitcher.seed_layout."""
