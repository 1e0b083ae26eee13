#!/bin/bash
# Two machines of 8 GPUs each, listed in hostfile.
deepspeed --hostfile hostfile --master_port 29500 train.py --deepspeed --config settings/wan_lora.json
