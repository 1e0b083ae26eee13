import os

from options import Options


def main():
    opt = Options(is_train=True)
    opt.parse()
    # Select the GPUs before anything imports torch (network_trainer does).
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in opt.train["gpus"])

    from network_trainer import NetworkTrainer

    trainer = NetworkTrainer(opt)
    trainer.set_seed()
    trainer.set_network()
    trainer.run()


if __name__ == "__main__":
    main()
