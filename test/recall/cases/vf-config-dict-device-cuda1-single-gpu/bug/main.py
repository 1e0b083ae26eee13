from trainer import sample, train


def main(model_config=None):
    config = {
        "state": "train",  # or "eval"
        "epoch": 200,
        "batch_size": 80,
        "T": 1000,
        "channel": 128,
        "channel_mult": [1, 2, 3, 4],
        "num_res_blocks": 2,
        "dropout": 0.15,
        "lr": 1e-4,
        "beta_1": 1e-4,
        "beta_T": 0.02,
        "img_size": 32,
        "grad_clip": 1.0,
        "device": "cuda:1",
        "save_weight_dir": "./checkpoints/",
        "test_load_weight": "ckpt_199_.pt",
        "sampled_dir": "./samples/",
    }
    if model_config is not None:
        config = model_config
    if config["state"] == "train":
        train(config)
    else:
        sample(config)


if __name__ == "__main__":
    main()
