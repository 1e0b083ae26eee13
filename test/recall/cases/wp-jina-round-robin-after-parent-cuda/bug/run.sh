#!/bin/bash
# One replica per GPU: Jina replaces RR with a different GPU id for each replica.
CUDA_VISIBLE_DEVICES=RR python app.py
