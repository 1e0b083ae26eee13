#!/bin/bash
# GPU 0 of this workstation is busy with another job; tables go on GPU 1 (see local.env)
python extract_tables.py papers/ tables/
